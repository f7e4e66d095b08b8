"""Desktop applications as an environment: a private desktop (Xvfb, D-Bus, the AT-SPI bus) with
real GTK 3/4, Qt 5 and Tk applications on it (``session``, ``apps``), their widgets read from the
accessibility tree or Tk's own introspection (``atspi``, ``tk``, ``labels``: the labeller that
``caap dataset desktop`` and the oracle observer share), and the desktop benchmark built on it:
tasks (``task``, ``tasks``), their checks on the applications' final state (``checks``), the
episode environment (``env``) and the accessibility oracle (``oracle``)."""

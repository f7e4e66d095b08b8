"""``python -m caap.cli``: the caap command (as torchrun and accelerate launch it)."""

from caap.cli import main

main()

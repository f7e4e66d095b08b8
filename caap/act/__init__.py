"""Act: the action registry and the executors that turn planned actions into OS input."""

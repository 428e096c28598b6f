"""The passes and their probes: the only code that runs the user's call under a profiler."""

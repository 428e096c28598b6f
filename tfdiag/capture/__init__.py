"""Stage 1: probes. The only code that runs the user's call under a profiler."""

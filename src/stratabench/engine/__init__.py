"""The engine: calibrated measurement of operations, in worker processes."""

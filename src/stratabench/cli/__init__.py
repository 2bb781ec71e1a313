"""The command line: one module per sub-command; only ``main`` prints errors and exits."""

"""stratabench: a benchmark workbench for the data layer."""

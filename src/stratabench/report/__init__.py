"""Reports: one neutral table model, rendered by thin format plugins."""

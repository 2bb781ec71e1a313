"""Adapters that run stratabench programs written in other languages as subprocesses."""

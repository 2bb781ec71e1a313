"""Layers: codecs, compressors, stores and mappers, each a plugin kind."""

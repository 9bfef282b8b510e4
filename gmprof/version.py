"""gmprof's version, in a module of its own so that anything can import it without
importing the package (and the API it loads)."""

__version__ = "0.1.0"

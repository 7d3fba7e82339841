"""The version of bayesvm (``bayesvm.__version__``), in a module of its own so that any
module can name it without importing the package.
"""

__version__ = "0.2.0"

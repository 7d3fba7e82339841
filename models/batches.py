"""Minibatches of rows, from arrays in memory or chunk by chunk from Dask arrays.

Stochastic VI (Hoffman et al. 2013; Wenzel et al. 2017 Algorithm 1 line 6) visits the data in
minibatches. Rows are read one chunk at a time: an epoch visits the chunks in a random order,
loads one (``compute()`` for Dask: from Parquet, Zarr or ``.npy`` stacks on disk) and yields
its rows in random minibatches, so memory holds one chunk whatever the number of rows. Arrays
in memory are a single chunk.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

__all__ = ["Minibatch", "MinibatchModel", "RowSource", "is_dask_array"]


def is_dask_array(value) -> bool:
    """Whether ``value`` is a Dask array (without importing Dask when it is not)."""
    return type(value).__module__.startswith("dask.")


class Minibatch(NamedTuple):
    """Rows of the training set: their indices, inputs and labels (-1/+1)."""

    rows: np.ndarray
    X: np.ndarray
    y: np.ndarray


@runtime_checkable
class MinibatchModel(Protocol):
    """A model that stochastic VI can fit (:mod:`bayesvm.vb.svi`): it streams minibatches
    and builds its blocks on them.
    """

    def minibatches(self, batch_size: int, rng: np.random.Generator) -> Iterator[Minibatch]:
        """Endless random minibatches of training rows (:class:`Minibatch`)."""

    def batch_blocks(self, rows, X_rows, y_rows, scale: float = 1.0) -> list:
        """The blocks on some rows, their likelihood counted ``scale`` times (a minibatch
        stands for ``n / |S|`` copies of itself).
        """


class RowSource:
    """Training rows ``(X, y)``: NumPy arrays, or Dask arrays chunked along the rows.

    Parameters
    ----------
    X : ndarray or dask.array.Array of shape (n, d)
    y : ndarray or dask.array.Array of shape (n,)
        Labels coded -1/+1 (Dask: rechunked to ``X``'s row chunks).
    """

    def __init__(self, X, y):
        self.X, self.y = X, y
        if is_dask_array(X):
            self.bounds = np.cumsum((0, *X.chunks[0]))
            self.y = y.rechunk((X.chunks[0],))
        else:
            self.bounds = np.array([0, X.shape[0]])

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.bounds[-1])

    @property
    def n_chunks(self) -> int:
        """Number of chunks."""
        return self.bounds.size - 1

    def chunk(self, k: int) -> tuple[int, np.ndarray, np.ndarray]:
        """Chunk ``k`` in memory: its first row's index, its inputs and labels."""
        start, stop = int(self.bounds[k]), int(self.bounds[k + 1])
        X, y = self.X[start:stop], self.y[start:stop]
        if is_dask_array(X):
            import dask

            X, y = dask.compute(X, y)
        return start, np.asarray(X, dtype=float), np.asarray(y, dtype=float)

    def minibatches(self, batch_size: int, rng: np.random.Generator) -> Iterator[Minibatch]:
        """Endless random minibatches of ``batch_size`` rows, epoch after epoch.

        Every minibatch has ``batch_size`` rows: the rows a chunk leaves over start the next
        minibatch, completed from the next chunk (or epoch). A short minibatch would count
        each of its rows more often (``n / |S|``) and add much noise to the step.
        """
        left = Minibatch(np.empty(0, dtype=int), None, np.empty(0))
        while True:
            for k in rng.permutation(self.n_chunks):
                start, X, y = self.chunk(int(k))
                order = rng.permutation(y.shape[0])
                rows = np.concatenate([left.rows, start + order])
                X = X[order] if left.X is None else np.concatenate([left.X, X[order]])
                y = np.concatenate([left.y, y[order]])
                full = rows.size - rows.size % batch_size
                for low in range(0, full, batch_size):
                    batch = slice(low, low + batch_size)
                    yield Minibatch(rows[batch], X[batch], y[batch])
                left = Minibatch(rows[full:], X[full:], y[full:])

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """Inputs of ``size`` random rows (all of them when there are fewer), read chunk by
        chunk (k-means for the inducing points, the default length-scale).
        """
        if size >= self.n_rows:
            return np.concatenate([self.chunk(k)[1] for k in range(self.n_chunks)])
        rows = np.sort(rng.choice(self.n_rows, size, replace=False))
        parts = []
        for k in range(self.n_chunks):
            start, stop = self.bounds[k], self.bounds[k + 1]
            inside = rows[(rows >= start) & (rows < stop)]
            if inside.size:
                X = self.X[start:stop][inside - start]
                parts.append(np.asarray(X.compute() if is_dask_array(X) else X, dtype=float))
        return np.concatenate(parts)

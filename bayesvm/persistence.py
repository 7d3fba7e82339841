"""Read a :class:`~bayesvm.Fit` back from the netCDF file :meth:`Fit.to_netcdf
<bayesvm.Fit.to_netcdf>` wrote (:mod:`bayesvm.fit_file` gives its layout): :func:`load`.

:func:`load` reads the files of every bayesvm so far and refuses a newer format, a file cut
short and a netCDF file not written by bayesvm, with a message naming the file; it rebuilds
classes only from those exported by :mod:`bayesvm.models` and :mod:`bayesvm.models.penalties`,
never by importing a name read from the file.
"""

from __future__ import annotations

import os

from bayesvm.fit_file import (
    FORMAT_ATTRIBUTE,
    MODEL_GROUP,
    RESTORED_ATTRIBUTES,
    TRACE_ATTRIBUTES,
    TRACE_GROUP,
    VERSION_ATTRIBUTE,
    format_problem,
    model_from_dataset,
    model_to_dataset,
    save,
)
from bayesvm.results import Fit

__all__ = ["save", "load", "model_to_dataset", "model_from_dataset", "RESTORED_ATTRIBUTES"]


def load(path):
    """Read a fit written by :meth:`Fit.to_netcdf <bayesvm.Fit.to_netcdf>`.

    The model is rebuilt from the stored data and hyperparameters, so the returned
    :class:`~bayesvm.Fit` predicts, summarises and compares like the one saved, and has the
    same ``method``, ``kind``, ``n_iter``, ``converged``, ``runtime_s`` and traces.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    Fit

    Raises
    ------
    FileNotFoundError
        When ``path`` does not exist.
    ValueError
        With a one-line message naming ``path``: when it is not a complete netCDF-4 file (cut
        short, damaged, empty, or of another format), is a netCDF file not written by
        :meth:`Fit.to_netcdf` (such as an InferenceData saved by ArviZ), was written by a newer
        bayesvm in a format this one cannot read, or its model cannot be rebuilt.
    """
    from bayesvm._arviz import arviz as az  # imported here: ArviZ costs 1 s at startup

    path = os.fspath(path)
    try:
        _visit_hdf5_objects(path)
        with az.rc_context({"data.load": "eager"}):
            idata = az.from_netcdf(path)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except Exception as error:  # h5py reports a damaged file by whatever part it trips on
        raise ValueError(
            f"{path} is not a complete netCDF-4 file (it is cut short, damaged or of another "
            f"format): {' '.join(str(error).split())}"
        ) from error
    # A file that either mark says bayesvm wrote must be in a format this version reads.
    writer = idata.attrs.pop(VERSION_ATTRIBUTE, None)
    model_attrs = idata[MODEL_GROUP].attrs if MODEL_GROUP in idata.groups() else {}
    stored_format = model_attrs.get(FORMAT_ATTRIBUTE)
    if writer is not None or stored_format is not None:
        problem = format_problem(stored_format, writer)
        if problem is not None:
            raise ValueError(f"{path} {problem}")
    if MODEL_GROUP not in idata.groups():
        raise ValueError(
            f"{path} has no {MODEL_GROUP!r} group (it has {idata.groups()}): it is not a fit "
            "written by bayesvm's Fit.to_netcdf"
        )
    missing_attrs = sorted({"method", "kind", "n_iter", "converged"} - set(idata.attrs))
    if missing_attrs:
        raise ValueError(
            f"{path} lacks the attributes {missing_attrs}: it is not a fit written by bayesvm's "
            "Fit.to_netcdf"
        )
    try:
        model = model_from_dataset(idata[MODEL_GROUP], idata)
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{path}: cannot rebuild the model: {error}") from error
    traces = {}
    if TRACE_GROUP in idata.groups():
        stored = idata[TRACE_GROUP]
        traces = {name: stored[name].to_numpy() for name in TRACE_ATTRIBUTES if name in stored}
        del idata[TRACE_GROUP]
    del idata[MODEL_GROUP]
    attrs = idata.attrs
    fit = Fit(
        model,
        idata,
        str(attrs["method"]),
        str(attrs["kind"]),
        n_iter=int(attrs["n_iter"]),
        converged=bool(attrs["converged"]),
        problems=str(attrs.get("problems", "")).splitlines(),
        **traces,
    )
    for name, restore in RESTORED_ATTRIBUTES.items():
        if name in attrs:
            setattr(fit, name, restore(attrs[name]))
    return fit


def _visit_hdf5_objects(path: str) -> None:
    """Open the netCDF-4 (HDF5) file ``path`` and each group, variable and attribute set in
    it; h5py raises for a file cut short or damaged, and closes it cleanly (h5netcdf, failing
    on such a file, leaves a half-open file that complains when it is collected).
    """
    import h5py  # imported here: netCDF-4 is read through it (h5netcdf)

    with h5py.File(path, "r") as file:
        file.visititems(lambda name, item: None)

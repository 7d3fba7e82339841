"""The netCDF file of a :class:`~bayesvm.Fit`: its layout, :func:`save`, and the model's codec.

The file is the fit's InferenceData (``posterior``, ``sample_stats``, ``observed_data``,
``constant_data``, ``variational``; ``method``, ``kind``, ``n_iter``, ``converged`` and
``runtime_s`` in its attributes, and a variational fit's ``pareto_k`` and ``pareto_k_note``,
which a file written before them lacks: ``Fit.pareto_k`` is then NaN) with two more groups:

* ``model`` -- the model, serialised from its dataclass fields so that any frozen-dataclass
  model of :mod:`bayesvm.models` round-trips without code of its own. Arrays, and lists or
  tuples of labels, become variables (named by the field's path, e.g. ``penalty.scale``);
  scalars, strings, booleans and None go to the JSON attribute ``spec``; nested dataclasses
  (the penalty) recurse. ``spec`` records each class by name, each array's dtype and
  container, so that labels come back as the same Python types (int group labels stay ints).
  An array already stored in ``constant_data`` or ``observed_data`` under the field's name
  (``X``, ``Z``, ``group_index``, ``y``) with the same dtype and values is referenced there,
  not written twice.
* ``traces`` -- the fit's ``lower_bound_trace`` (VB) and ``objective_trace`` (EM/ECME).

The file records its layout, ``bayesvm_format`` (:data:`FORMAT_VERSION`) in the ``model``
group, and the version of bayesvm that wrote it, ``bayesvm_version`` in its own attributes
(files of bayesvm 0.1.0 lack it). :func:`save` writes the file whole or not at all
(:func:`bayesvm.files.atomic_path`): a run killed midway leaves the old file as it was.
:func:`bayesvm.persistence.load` reads it back; the model's classes are only those exported by
:mod:`bayesvm.models` and :mod:`bayesvm.models.penalties`, never a name read from the file.
"""

from __future__ import annotations

import json
import os
from dataclasses import fields, is_dataclass
from typing import TYPE_CHECKING

import numpy as np

import bayesvm.models as models
from bayesvm.files import atomic_path
from bayesvm.models import penalties
from bayesvm.version import __version__

if TYPE_CHECKING:
    import arviz as az
    import xarray as xr

__all__ = [
    "save",
    "model_to_dataset",
    "model_from_dataset",
    "format_problem",
    "RESTORED_ATTRIBUTES",
]

MODEL_GROUP = "model"
TRACE_GROUP = "traces"
#: The layout of the file, in the ``model`` group's attribute :data:`FORMAT_ATTRIBUTE`; a
#: change of layout that older versions cannot read increases it.
FORMAT_VERSION = 1
FORMAT_ATTRIBUTE = "bayesvm_format"
# In the file's own (root) attributes: the version of bayesvm that wrote it.
VERSION_ATTRIBUTE = "bayesvm_version"
# Groups whose arrays the model's fields may reference instead of storing them again.
DATA_GROUPS = ("constant_data", "observed_data")
# Fit keyword arguments kept in the ``traces`` group, one variable each.
TRACE_ATTRIBUTES = ("lower_bound_trace", "objective_trace")
# Fit attributes kept in ``idata.attrs`` besides the constructor's, with the conversion that
# restores each from its netCDF attribute. A new attribute of the fit is restored by adding it.
RESTORED_ATTRIBUTES = {"runtime_s": float}
CONTAINERS = {"list": list, "tuple": tuple}


def save(fit, path) -> str:
    """Write ``fit`` (its InferenceData, model and traces) to the netCDF file ``path``.

    ``fit.idata`` itself is not changed: the extra groups and the attribute
    ``bayesvm_version`` go into a shallow copy. The file is written beside ``path`` and
    renamed onto it when complete (:func:`bayesvm.files.atomic_path`). Returns ``path`` as a
    string.
    """
    import xarray as xr  # imported here: xarray and pandas cost 0.15 s at startup

    from bayesvm._arviz import arviz as az  # imported here: ArviZ costs 1 s at startup

    groups = {name: fit.idata[name] for name in fit.idata.groups()}
    groups[MODEL_GROUP] = model_to_dataset(fit.model, fit.idata)
    traces = {
        name: ([f"{name}_iteration"], np.asarray(getattr(fit, name)))
        for name in TRACE_ATTRIBUTES
        if getattr(fit, name) is not None
    }
    if traces:
        groups[TRACE_GROUP] = xr.Dataset(traces)
    idata = az.InferenceData(attrs={**fit.idata.attrs, VERSION_ATTRIBUTE: __version__}, **groups)
    with atomic_path(path) as temporary:
        idata.to_netcdf(os.fspath(temporary))
    return os.fspath(path)


def model_to_dataset(model, idata: az.InferenceData | None = None) -> xr.Dataset:
    """The ``model`` group: ``model``'s dataclass fields as variables and a JSON ``spec``.

    Parameters
    ----------
    model : dataclass instance
        A model (or penalty) of :mod:`bayesvm.models`.
    idata : arviz.InferenceData, optional
        The fit's data; a top-level field equal to the variable of the same name in its
        ``constant_data`` or ``observed_data`` group is referenced instead of stored.

    Raises
    ------
    TypeError
        For a class that :mod:`bayesvm.models` does not export, or a field value that has no
        netCDF form (a dict, a label list of mixed types, an object array holding None, ...).
    """
    import xarray as xr  # imported here: xarray and pandas cost 0.15 s at startup

    stored = {}
    if idata is not None:
        stored = {
            name: (group, idata[group][name].to_numpy())
            for group in DATA_GROUPS
            if group in idata.groups()
            for name in idata[group].data_vars
        }
    variables = {}
    spec = _encode_dataclass(model, "", variables, stored)
    return xr.Dataset(variables, attrs={FORMAT_ATTRIBUTE: FORMAT_VERSION, "spec": json.dumps(spec)})


def model_from_dataset(dataset: xr.Dataset, idata: az.InferenceData | None = None):
    """Rebuild the model that :func:`model_to_dataset` wrote (``idata`` for its references)."""
    problem = format_problem(dataset.attrs.get(FORMAT_ATTRIBUTE), writer=None)
    if problem is not None:
        raise ValueError(f"the model {problem}")
    return _decode(json.loads(dataset.attrs["spec"]), dataset, idata)


def format_problem(stored_format, writer: str | None) -> str | None:
    """Why this bayesvm cannot read a file of ``stored_format`` written by bayesvm ``writer``
    (as the end of a sentence naming the file); None when it can.
    """
    try:
        readable = 1 <= int(stored_format) <= FORMAT_VERSION
    except (TypeError, ValueError):
        readable = False
    if readable:
        return None
    by = "" if writer is None else f" by bayesvm {writer}"
    layout = "an unknown file format" if stored_format is None else f"file format {stored_format}"
    return (
        f"was written{by} in {layout}, which this bayesvm ({__version__}) cannot read: it reads "
        f"formats up to {FORMAT_VERSION}; a newer bayesvm may read it"
    )


def _known_classes() -> dict[str, type]:
    """The dataclasses a file may name: those exported by the models and penalties modules."""
    return {
        name: value
        for module in (models, penalties)
        for name in module.__all__
        if isinstance(value := getattr(module, name), type) and is_dataclass(value)
    }


def _encode_dataclass(value, path: str, variables: dict, stored: dict) -> dict:
    cls = type(value)
    if _known_classes().get(cls.__name__) is not cls:
        raise TypeError(
            f"cannot store a {cls.__module__}.{cls.__qualname__}: only the classes exported by "
            "bayesvm.models and bayesvm.models.penalties can be saved"
        )
    return {
        "class": cls.__name__,
        "fields": {
            field.name: _encode(getattr(value, field.name), path + field.name, variables, stored)
            for field in fields(value)
            if field.init
        },
    }


def _encode(value, path: str, variables: dict, stored: dict) -> dict:
    """The spec of one field; arrays go to ``variables`` under the field's ``path``."""
    if is_dataclass(value) and not isinstance(value, type):
        return _encode_dataclass(value, path + ".", variables, stored)
    if isinstance(value, np.generic) and value.dtype.kind in "biufU":
        value = value.item()
    if value is None or isinstance(value, bool | int | float | str):
        return {"value": value}
    if isinstance(value, np.ndarray):
        entry = {"array": path, "container": "ndarray", "dtype": value.dtype.str}
        if path in stored and _same_array(stored[path][1], value):
            return {**entry, "group": stored[path][0]}
    elif isinstance(value, list | tuple):
        entry = {"array": path, "container": type(value).__name__}
    else:
        raise TypeError(f"cannot store field {path!r} of type {type(value).__name__}")
    native = _native_array(value, path)
    variables[path] = ([f"{path}_dim_{axis}" for axis in range(native.ndim)], native)
    return entry


def _native_array(value, path: str) -> np.ndarray:
    """``value`` as an array of a netCDF type, checking that no element changes type.

    A list, tuple or object array must hold elements of one type among bool, int, float and
    str (numpy would turn mixed types into strings, and netCDF has no None).
    """
    if isinstance(value, np.ndarray) and value.dtype != object:
        return value
    objects = np.asarray(value, dtype=object)
    elements = objects.ravel().tolist()
    types = {type(e.item() if isinstance(e, np.generic) else e) for e in elements}
    if len(types) > 1 or not types <= {bool, int, float, str}:
        raise TypeError(
            f"cannot store field {path!r}: its elements must share one type among bool, int, "
            f"float and str; got {sorted(t.__name__ for t in types)}"
        )
    return np.array(elements).reshape(objects.shape)


def _same_array(stored: np.ndarray, value: np.ndarray) -> bool:
    return (
        stored.dtype == value.dtype
        and stored.shape == value.shape
        and np.array_equal(stored, value, equal_nan=value.dtype.kind in "fc")
    )


def _decode(spec: dict, dataset: xr.Dataset, idata: az.InferenceData | None):
    if "class" in spec:
        classes = _known_classes()
        if spec["class"] not in classes:
            raise ValueError(f"unknown model class {spec['class']!r}; known: {sorted(classes)}")
        cls = classes[spec["class"]]
        return cls(
            **{name: _decode(entry, dataset, idata) for name, entry in spec["fields"].items()}
        )
    if "value" in spec:
        return spec["value"]
    source = idata[spec["group"]] if "group" in spec else dataset
    values = source[spec["array"]].to_numpy()
    if spec["container"] == "ndarray":
        return values.astype(np.dtype(spec["dtype"]), copy=False)
    return CONTAINERS[spec["container"]](values.tolist())

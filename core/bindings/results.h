// Reuse of the result arrays a recv returns: what is kept of the last two results (Reusable), and the checks that
// no one else holds them (Unheld) or the front-end result made of them (Walk, ResultUnheld). PyEngine::RecvLocked,
// DirectBlock and KeepResult use them on every step, so they are inline here.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pp::bindings {

namespace py = pybind11;

// Reuse of result arrays (docs/decisions.md, "Engine: result arrays that no caller holds"): a small batch's
// arrays cost more to make than to fill, so the last two results are kept and one that nobody else references
// any more is refilled (its block overwritten with the new batch) and returned again. Held arrays never change:
// every way to reach a block from Python goes through the tuple, one of its arrays or the capsule (numpy points
// a view of our arrays, and memoryviews their exporter, at those objects), so reference counts of 1 (the
// tuple: our cache; each array: the tuple) and of n + 1 (the capsule: the n arrays and our cache) mean no
// one else can read the block. An array whose attributes were changed in place (shape, strides, dtype, flags)
// is not reused. Two results, so that the loop `obs = step(policy(obs))` (holding step k's arrays during step
// k + 1) reuses k - 1's. A step of a sync pool writes its rows into the block of such a result directly
// (DirectBlock), so there the results of batches of any size are kept; other batches are copied into a kept
// block only up to kReuseMaxBytes (larger ones get new arrays: their cost is small per row, a copy's is not).
inline constexpr size_t kReuseMaxBytes = 8192;
struct View {
  void* data;
  PyObject* descr;
  int nd, flags;
  std::vector<Py_intptr_t> dims, strides;
};
struct Container {
  PyObject* obj;    // a tuple or dict of the kept result (alive while the result is unchanged)
  Py_ssize_t refs;  // the references it has from within the result (+ ours, for the result itself)
  Py_ssize_t size;  // a dict's number of items when kept; -1 for a tuple (immutable)
};
struct Reusable {
  py::tuple arrays;
  py::object base;
  uint8_t* block = nullptr;
  int env_rows = -1, player_rows = -1;
  std::vector<View> views;
  // A front-end result made of these arrays (KeepResult), reused with them. extra[i]: its references to array i;
  // containers: its tuples and dicts, each after the one holding it; items: each dict's keys and values as
  // kept, in that order.
  py::object result;
  std::vector<Py_ssize_t> extra;
  std::vector<Container> containers;
  std::vector<PyObject*> items;
  void ForgetResult() {
    result = py::object();
    extra.assign(views.size(), 0);
    containers.clear();
    items.clear();
  }
};
inline constexpr int kMaxResultDepth = 4;
inline constexpr size_t kMaxResultContainers = 16;
// Records what of `obj` (a part of a front-end result) Unheld must check: its tuples and dicts (exact types) and
// its references to the batch's arrays. False when the result cannot be kept: deeper or larger than the limits,
// or with a part that could change without a trace in what we check (a list, any other object) -- other numpy
// arrays (gymnasium's `_key` masks) only when read-only, and immutable scalars and strings.
inline bool Walk(Reusable& c, PyObject* obj, int depth) {
  for (size_t i = 0; i < c.extra.size(); ++i) {
    if (obj == PyTuple_GET_ITEM(c.arrays.ptr(), static_cast<py::ssize_t>(i))) {
      ++c.extra[i];
      return true;
    }
  }
  const bool tuple = PyTuple_CheckExact(obj), dict = PyDict_CheckExact(obj);
  if (!tuple && !dict) {
    if (py::isinstance<py::array>(obj)) {
      return !(py::detail::array_proxy(obj)->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_);
    }
    return obj == Py_None || PyBool_Check(obj) || PyLong_CheckExact(obj) || PyFloat_CheckExact(obj) ||
           PyUnicode_CheckExact(obj) || PyBytes_CheckExact(obj);
  }
  for (auto& seen : c.containers) {
    if (seen.obj == obj) {
      ++seen.refs;
      return true;
    }
  }
  if (depth > kMaxResultDepth || c.containers.size() >= kMaxResultContainers) return false;
  c.containers.push_back({obj, depth == 0 ? 0 : 1, tuple ? -1 : PyDict_GET_SIZE(obj)});
  if (tuple) {
    for (py::ssize_t i = 0; i < PyTuple_GET_SIZE(obj); ++i) {
      if (!Walk(c, PyTuple_GET_ITEM(obj, i), depth + 1)) return false;
    }
    return true;
  }
  // the dict's items right after it is recorded (ResultUnheld reads them in that order), then its values' parts
  const size_t first = c.items.size();
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (PyDict_Next(obj, &pos, &key, &value)) {
    if (!PyUnicode_CheckExact(key)) return false;
    c.items.push_back(key);
    c.items.push_back(value);
  }
  const size_t end = c.items.size();
  for (size_t i = first + 1; i < end; i += 2) {
    if (!Walk(c, c.items[i], depth + 1)) return false;
  }
  return true;
}
// The kept result is held by nobody else and unchanged: each container has exactly its references from within
// the result, and each dict its kept items. Parents are checked before their parts, so every object compared is
// alive (held by a part already found unchanged); pointers are only compared, never followed, until then.
inline bool ResultUnheld(const Reusable& c) {
  size_t k = 0;
  for (const Container& ct : c.containers) {
    if (Py_REFCNT(ct.obj) != ct.refs) return false;
    if (ct.size < 0) continue;
    if (!PyDict_CheckExact(ct.obj) || PyDict_GET_SIZE(ct.obj) != ct.size) return false;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(ct.obj, &pos, &key, &value)) {
      if (key != c.items[k] || value != c.items[k + 1]) return false;
      k += 2;
    }
  }
  return true;
}
inline View ViewOf(PyObject* a) {
  const auto* p = py::detail::array_proxy(a);
  return View{
      p->data, p->descr, p->nd, p->flags, {p->dimensions, p->dimensions + p->nd}, {p->strides, p->strides + p->nd}};
}
inline bool Unheld(const Reusable& c) {
  if (!c.arrays || Py_REFCNT(c.arrays.ptr()) != 1) return false;
  const py::ssize_t n = static_cast<py::ssize_t>(c.views.size());
  if (Py_REFCNT(c.base.ptr()) != n + 1) return false;
  for (py::ssize_t i = 0; i < n; ++i) {
    PyObject* a = PyTuple_GET_ITEM(c.arrays.ptr(), i);
    if (Py_REFCNT(a) != 1 + c.extra[static_cast<size_t>(i)]) return false;
    const auto* p = py::detail::array_proxy(a);
    const View& v = c.views[static_cast<size_t>(i)];
    if (p->data != v.data || p->descr != v.descr || p->nd != v.nd || p->flags != v.flags) return false;
    for (int d = 0; d < v.nd; ++d) {  // a loop, not std::equal: that is a memcmp call per array
      if (p->dimensions[d] != v.dims[static_cast<size_t>(d)] || p->strides[d] != v.strides[static_cast<size_t>(d)]) {
        return false;
      }
    }
  }
  return !c.result || ResultUnheld(c);
}

}  // namespace pp::bindings

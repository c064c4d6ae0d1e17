// Conversions between Python values and the engine's C++ types: config dicts and specs (convert.cc), env ids,
// seeds and actions. What every step and send runs (env ids, actions: the per-call cost of a small pool) is inline
// here; the rest is in convert.cc.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>  // in every file of the module: std::vector casts must mean one thing

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/engine.h"
#include "core/engine/registry.h"
#include "core/engine/spec.h"

namespace pp::bindings {

namespace py = pybind11;

py::dtype ToNumpy(DType d);
py::object ConfigValueToPy(const ConfigValue& v);
std::string TypeNameOf(py::handle h);
// A Python int as int64, or ValueError naming `what` when it does not fit (never a wrapped value).
int64_t ToInt64(const std::string& what, py::handle h);
// A config value of the type the key's default has (an int is accepted for a float key).
ConfigValue PyToConfigValue(const std::string& key, const ConfigValue& default_value, py::handle h);
const EnvClass& FindType(const std::string& name);
Config MakeConfig(const EnvClass& type, const py::dict& d);
py::dict ConfigToDict(const Config& c);
// A config dict whose values may be lists or tuples of one value per env (per-env values; parallel_pool.registry
// has checked which keys may vary): the engine's config (env 0's values) and, when a key varies, one config per env.
std::pair<Config, std::vector<Config>> MakeEnvConfigs(const EnvClass& type, const py::dict& d);
py::dict ArrayToDict(const ArraySpec& a);
py::dict SpecToDict(const Spec& s);

// One seed per env being reset, each an int in [0, 2**63 - 1] (Engine::Send rejects negatives by name; here
// only what cannot even be held in int64).
std::vector<int64_t> ConvertSeeds(py::handle seeds, int k);
// ValueError for a uint64 action value above 2**63 - 1 (out of every action's range).
void CheckUInt64Action(const ArraySpec& a, const py::array& raw);

// Env ids given from Python (any integer dtype, 0-d or 1-d) as int32, range-checked in 64 bit before narrowing.
inline py::array_t<int32_t> ConvertEnvIds(py::handle env_id, int num_envs) {
  auto& api = py::detail::npy_api::get();
  if (api.PyArray_Check_(env_id.ptr())) {
    // the common argument, a batch's own env_id array (an async loop's send): int32, 1-d, contiguous. Read in
    // place; the range check without a branch per id (Engine::Send checks each id again, with its message)
    const auto* a = py::detail::array_proxy(env_id.ptr());
    const auto* d = py::detail::array_descriptor_proxy(a->descr);
    const int need = py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_ | py::detail::npy_api::NPY_ARRAY_ALIGNED_;
    if (a->nd == 1 && d->type_num == py::detail::npy_api::NPY_INT32_ && d->byteorder != '>' &&
        (a->flags & need) == need) {
      const auto* p = reinterpret_cast<const int32_t*>(a->data);
      const auto n = static_cast<uint32_t>(num_envs);
      uint32_t outside = 0;  // an id < 0 wraps to >= 2**31 as unsigned
      for (py::ssize_t i = 0; i < a->dimensions[0]; ++i) outside |= static_cast<uint32_t>(p[i]) >= n;
      if (!outside) return py::reinterpret_borrow<py::array_t<int32_t>>(env_id);
    }
  }
  py::array raw = py::array::ensure(env_id);
  if (!raw) throw py::type_error("env_id must be an array of integers");
  char kind = raw.dtype().kind();
  if (kind != 'i' && kind != 'u') {
    throw py::type_error("env_id must be integers, got dtype " + py::str(raw.dtype()).cast<std::string>());
  }
  if (raw.ndim() > 1) throw py::value_error("env_id must be a 1-d array of env ids");
  // (an int32 array in place was taken above; here other dtypes, layouts, and ids to name in an error)
  auto as64 = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(raw);
  const int64_t* p = as64.data();
  for (py::ssize_t i = 0; i < as64.size(); ++i) {
    if (p[i] < 0 || p[i] >= num_envs) {
      throw py::value_error("env_id " + std::to_string(p[i]) + " is out of range: this pool has env ids 0.." +
                            std::to_string(num_envs - 1));
    }
  }
  return py::array_t<int32_t, py::array::c_style | py::array::forcecast>::ensure(raw);
}

// The engine dtype of a numpy dtype, if it is one of them.
inline std::optional<DType> EngineDType(const py::dtype& d) {
  // native-byte-order builtin dtypes are singletons, so identity is the exact test; looked up once (a
  // py::dtype::of per call and dtype showed in the per-step cost), and never freed (as a module-level object)
  static const auto* table = new std::vector<std::pair<py::dtype, DType>>{
      {py::dtype::of<int32_t>(), DType::kInt32}, {py::dtype::of<int64_t>(), DType::kInt64},
      {py::dtype::of<float>(), DType::kFloat32}, {py::dtype::of<double>(), DType::kFloat64},
      {py::dtype::of<uint8_t>(), DType::kUInt8}, {py::dtype::of<bool>(), DType::kBool}};
  for (const auto& [dtype, engine] : *table) {
    if (d.is(dtype)) return engine;
  }
  return std::nullopt;
}

// The common action: a C-contiguous ndarray of the action's own integer or float kind, in an engine dtype, with
// the expected shape. It is handed to the engine as is; anything else goes through ConvertAction's checks.
inline bool IsUsableAsIs(const ArraySpec& a, py::handle obj, int rows) {
  if (!py::isinstance<py::array>(obj)) return false;
  auto arr = py::reinterpret_borrow<py::array>(obj);
  if (!(arr.flags() & py::array::c_style)) return false;
  const std::optional<DType> d = EngineDType(arr.dtype());
  if (!d) return false;
  const bool ints = *d == DType::kInt32 || *d == DType::kInt64;
  const bool floats = *d == DType::kFloat32 || *d == DType::kFloat64;
  if (!(IsIntegral(a.dtype) ? ints : floats)) return false;
  const py::ssize_t nd = arr.ndim(), want = static_cast<py::ssize_t>(a.shape.size());
  const py::ssize_t* shape = arr.shape();
  int lead = 0;  // (rows, *shape), or a single row's shape alone
  if (nd == want + 1 && shape[0] == rows) {
    lead = 1;
  } else if (!(nd == want && rows == 1)) {
    return false;
  }
  for (py::ssize_t i = 0; i < want; ++i) {
    if (shape[i + lead] != a.shape[static_cast<size_t>(i)]) return false;
  }
  return true;
}

// expected shape: (rows, *shape); a single row may also be given without its leading dimension
inline void CheckActionShape(const ArraySpec& a, const py::array& raw, int rows, int k) {
  std::vector<py::ssize_t> want{rows};
  for (int s : a.shape) want.push_back(s);
  bool ok = static_cast<size_t>(raw.ndim()) == want.size();
  for (size_t i = 0; ok && i < want.size(); ++i) ok = raw.shape(static_cast<py::ssize_t>(i)) == want[i];
  if (!ok && rows == 1 && static_cast<size_t>(raw.ndim()) == a.shape.size()) {
    ok = true;
    for (size_t i = 0; ok && i < a.shape.size(); ++i) ok = raw.shape(static_cast<py::ssize_t>(i)) == a.shape[i];
  }
  if (!ok) {
    std::string got = py::str(py::tuple(py::cast(std::vector<py::ssize_t>(raw.shape(), raw.shape() + raw.ndim()))));
    std::string exp = py::str(py::tuple(py::cast(want)));
    std::string why = rows == k ? std::to_string(rows) + " envs in this call"
                                : std::to_string(rows) + " player rows of " + std::to_string(k) + " envs";
    throw py::value_error("action '" + a.name + "' has shape " + got + ", expected " + exp + " (" + why + ")");
  }
}

// The action as a C-contiguous array in an engine dtype of the same kind, values untouched: the range check
// happens in Engine::Send, in this dtype, before anything is narrowed. Only dtypes the engine does not have are
// widened here (int8/int16/uint16/uint32 -> int64, float16 -> float32), which loses nothing; uint64 values
// above 2**63 - 1 are out of every action's range and are reported here.
inline py::array ConvertAction(const ArraySpec& a, py::handle obj, int rows, int k) {
  if (IsUsableAsIs(a, obj, rows)) return py::reinterpret_borrow<py::array>(obj);
  py::array raw = py::array::ensure(obj);
  if (!raw) throw py::type_error("action '" + a.name + "' must be array-like");
  char kind = raw.dtype().kind();
  bool want_int = IsIntegral(a.dtype);
  if (want_int && kind != 'i' && kind != 'u' && kind != 'b') {
    throw py::type_error("action '" + a.name + "' must be integers (dtype " + DTypeName(a.dtype) + "), got dtype " +
                         py::str(raw.dtype()).cast<std::string>());
  }
  if (!want_int && kind != 'f' && kind != 'i' && kind != 'u') {
    throw py::type_error("action '" + a.name + "' must be numeric (dtype " + DTypeName(a.dtype) + "), got dtype " +
                         py::str(raw.dtype()).cast<std::string>());
  }
  CheckActionShape(a, raw, rows, k);
  if (EngineDType(raw.dtype()).has_value()) return py::array::ensure(raw, py::array::c_style);
  if (kind == 'u' && raw.dtype().itemsize() == 8) CheckUInt64Action(a, raw);
  py::dtype wide(kind == 'f' ? "float32" : "int64");
  if (kind == 'f' && raw.dtype().itemsize() > 4) wide = py::dtype("float64");  // longdouble: nearest we have
  return py::array::ensure(raw.attr("astype")(wide, py::arg("order") = "C"));
}

}  // namespace pp::bindings

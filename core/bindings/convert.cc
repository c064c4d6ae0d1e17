// Conversions between Python values and the engine's C++ types that run once per pool or on a rarely taken path:
// config dicts (with per-env values) to Config, Config and Spec back to dicts, seeds, uint64 actions. The
// conversions every step and send run are inline in convert.h.
#include "core/bindings/convert.h"

#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/registry.h"

namespace pp::bindings {

py::dtype ToNumpy(DType d) { return py::dtype(DTypeName(d)); }

py::object ConfigValueToPy(const ConfigValue& v) {
  switch (v.index()) {
    case 0: return py::bool_(std::get<bool>(v));
    case 1: return py::int_(std::get<int64_t>(v));
    case 2: return py::float_(std::get<double>(v));
    default: return py::str(std::get<std::string>(v));
  }
}

std::string TypeNameOf(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>(); }

int64_t ToInt64(const std::string& what, py::handle h) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0) {
    throw py::value_error(what + " is " + py::str(h).cast<std::string>() + ", which does not fit in a 64-bit integer");
  }
  return v;
}

ConfigValue PyToConfigValue(const std::string& key, const ConfigValue& default_value, py::handle h) {
  const std::string what = "config key '" + key + "'";
  auto wrong = [&](const char* want) {
    return py::type_error(what + " must be " + want + ", got " + TypeNameOf(h) + " " + py::repr(h).cast<std::string>());
  };
  // numpy scalars count as their Python counterparts
  const bool is_bool = py::isinstance<py::bool_>(h) || py::isinstance(h, py::module_::import("numpy").attr("bool_"));
  const bool is_int = !is_bool && py::hasattr(h, "__index__");
  switch (default_value.index()) {
    case 0:
      if (!is_bool) throw wrong("a bool");
      return py::bool_(py::reinterpret_borrow<py::object>(h)).cast<bool>();
    case 1: {
      if (!is_int) throw wrong("an int");
      py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
      if (!index) throw py::error_already_set();  // a broken __index__
      return ToInt64(what, index);
    }
    case 2:
      if (is_bool || !(is_int || py::isinstance<py::float_>(h) || py::hasattr(h, "__float__"))) throw wrong("a number");
      return py::float_(py::reinterpret_borrow<py::object>(h)).cast<double>();
    default:
      if (!py::isinstance<py::str>(h)) throw wrong("a str");
      return h.cast<std::string>();
  }
}

const EnvClass& FindType(const std::string& name) {
  auto& types = Registry::Get().types();
  auto it = types.find(name);
  if (it == types.end()) throw py::value_error("unknown env class '" + name + "'");
  return it->second;
}

Config MakeConfig(const EnvClass& type, const py::dict& d) {
  std::map<std::string, ConfigValue> values;
  for (const auto& k : type.keys) values[k.name] = k.default_value;
  for (auto item : d) {
    std::string key = item.first.cast<std::string>();
    auto it = values.find(key);
    if (it == values.end()) throw py::value_error("unknown config key '" + key + "'");
    it->second = PyToConfigValue(key, it->second, item.second);
  }
  return Config(std::move(values));
}

py::dict ConfigToDict(const Config& c) {
  py::dict d;
  for (const auto& [k, v] : c.values()) d[py::str(k)] = ConfigValueToPy(v);
  return d;
}

std::pair<Config, std::vector<Config>> MakeEnvConfigs(const EnvClass& type, const py::dict& d) {
  py::dict scalars;
  std::vector<std::pair<std::string, py::list>> varying;
  for (auto item : d) {
    if (py::isinstance<py::list>(item.second) || py::isinstance<py::tuple>(item.second)) {
      py::list values(py::reinterpret_borrow<py::object>(item.second));
      const std::string key = item.first.cast<std::string>();
      if (values.empty()) throw py::value_error("config key '" + key + "': an empty list of per-env values");
      scalars[item.first] = values[0];
      varying.emplace_back(key, values);
    } else {
      scalars[item.first] = item.second;
    }
  }
  Config base = MakeConfig(type, scalars);
  std::vector<Config> per_env;
  if (varying.empty()) return {std::move(base), std::move(per_env)};
  const int64_t n = base.Get<int64_t>("num_envs");
  for (const auto& [key, values] : varying) {
    if (static_cast<int64_t>(values.size()) != n) {
      throw py::value_error("config key '" + key + "' has " + std::to_string(values.size()) + " per-env values for " +
                            std::to_string(n) + " envs");
    }
  }
  per_env.assign(static_cast<size_t>(n), base);
  for (const auto& [key, values] : varying) {
    const ConfigValue& def = base.values().at(key);
    for (int64_t i = 0; i < n; ++i) per_env[i].mutable_values()[key] = PyToConfigValue(key, def, values[i]);
  }
  return {std::move(base), std::move(per_env)};
}

py::dict ArrayToDict(const ArraySpec& a) {
  py::dict d;
  d["name"] = a.name;
  d["dtype"] = DTypeName(a.dtype);
  d["shape"] = py::tuple(py::cast(a.shape));
  d["low"] = a.low;
  d["high"] = a.high;
  d["per_player"] = a.per_player;
  d["envpool_low"] = a.envpool_low;
  d["envpool_high"] = a.envpool_high;
  return d;
}

py::dict SpecToDict(const Spec& s) {
  py::dict d;
  py::list obs, info, act;
  for (const auto& a : s.obs) obs.append(ArrayToDict(a));
  for (const auto& a : s.info) info.append(ArrayToDict(a));
  for (const auto& a : s.action) act.append(ArrayToDict(a));
  d["obs"] = obs;
  d["info"] = info;
  d["action"] = act;
  d["reward_dtype"] = DTypeName(s.reward_dtype);
  d["max_players"] = s.num_players_max;
  d["render_shape"] = py::tuple(py::cast(s.render_shape));
  py::list players;
  for (const auto& p : s.players) {
    py::dict player;
    player["name"] = p.name;
    player["obs_size"] = p.obs_size;
    player["action_size"] = p.action_size;
    players.append(player);
  }
  d["players"] = players;
  return d;
}

std::vector<int64_t> ConvertSeeds(py::handle seeds, int k) {
  py::array raw = py::array::ensure(seeds);
  if (!raw || raw.ndim() != 1 || raw.size() != k || (raw.dtype().kind() != 'i' && raw.dtype().kind() != 'u')) {
    throw py::value_error("seeds must be a 1-d array of " + std::to_string(k) + " integers (one per env being reset)");
  }
  std::vector<int64_t> out(static_cast<size_t>(k));
  py::list values = raw.attr("tolist")();  // Python ints: exact for every integer dtype, uint64 included
  for (int i = 0; i < k; ++i) out[static_cast<size_t>(i)] = ToInt64("seed", values[static_cast<size_t>(i)]);
  return out;
}

void CheckUInt64Action(const ArraySpec& a, const py::array& raw) {
  auto c = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>::ensure(raw);
  const size_t per = a.NumElements();
  for (py::ssize_t i = 0; i < c.size(); ++i) {
    if (c.data()[i] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      double lo = a.low.empty() ? 0 : a.low[0], hi = a.high.empty() ? 0 : a.high[0];
      if (a.low.size() > 1) lo = a.low[static_cast<size_t>(i) % per], hi = a.high[static_cast<size_t>(i) % per];
      throw py::value_error(ActionRangeError(a.name, static_cast<size_t>(i) / per, std::to_string(c.data()[i]),
                                             static_cast<int64_t>(lo), static_cast<int64_t>(hi)));
    }
  }
}

}  // namespace pp::bindings

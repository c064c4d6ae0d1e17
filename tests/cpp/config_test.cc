#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "core/engine/engine.h"

namespace pp {
namespace {

Config Common(std::map<std::string, ConfigValue> overrides) {
  std::map<std::string, ConfigValue> v;
  for (const auto& k : CommonConfigKeys()) v[k.name] = k.default_value;
  for (auto& [k, val] : overrides) v[k] = val;
  return Config(std::move(v));
}

TEST(Config, IntKeysAreRangeCheckedBeforeNarrowing) {
  Config c = Common({{"num_envs", int64_t{1} << 32}, {"seed", int64_t{-5}}});
  try {
    c.Get<int>("num_envs");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("config key 'num_envs' is 4294967296"), std::string::npos) << e.what();
  }
  EXPECT_EQ(c.Get<int64_t>("num_envs"), int64_t{1} << 32);
  EXPECT_EQ(Common({{"num_envs", int64_t{std::numeric_limits<int>::max()}}}).Get<int>("num_envs"),
            std::numeric_limits<int>::max());
}

TEST(Config, PoolOptionsRejectBadValues) {
  EXPECT_THROW(ParseOptions(Common({{"num_envs", int64_t{0}}})), std::invalid_argument);
  EXPECT_THROW(ParseOptions(Common({{"num_envs", int64_t{1} << 31}})), std::invalid_argument);
  EXPECT_THROW(ParseOptions(Common({{"seed", int64_t{-1}}})), std::invalid_argument);
  EXPECT_THROW(ParseOptions(Common({{"num_threads", int64_t{5000}}})), std::invalid_argument);
  EXPECT_THROW(ParseOptions(Common({{"num_envs", int64_t{2}}, {"batch_size", int64_t{3}}})), std::invalid_argument);
  EXPECT_THROW(ParseOptions(Common({{"autoreset_mode", std::string("sometimes")}})), std::invalid_argument);
  EngineOptions o = ParseOptions(Common({{"num_envs", int64_t{4}}, {"seed", std::numeric_limits<int64_t>::max()}}));
  EXPECT_EQ(o.batch_size, 4);
  EXPECT_GE(o.num_threads, 1);
}

TEST(Config, AutomaticThreadsLeaveTheCallersCore) {
  // num_threads = 0: a worker per core but the caller's (it steps envs while it waits), at least one, at most
  // batch_size; an env class whose step waits on another process gets a worker per core
  const Config many = Common({{"num_envs", int64_t{256}}});
  const int cores = NumCores();
  EXPECT_EQ(ParseOptions(many).num_threads, std::max(cores - 1, 1));
  EXPECT_EQ(ParseOptions(many, true).num_threads, cores);
  EXPECT_EQ(ParseOptions(Common({{"num_envs", int64_t{1}}}), true).num_threads, 1);
  EXPECT_EQ(ParseOptions(Common({{"num_envs", int64_t{256}}, {"num_threads", int64_t{3}}})).num_threads, 3);
}

}  // namespace
}  // namespace pp

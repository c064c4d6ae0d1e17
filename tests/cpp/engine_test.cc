// The pool with a tiny env: sync ordering, async completion order through the batch ring, env exceptions.
#include "core/engine/engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace pp {
namespace {

// obs int32 [env_id, steps]; Discrete(10) action; with delay=True envs 0 and 1 sleep 200 ms per step (a margin
// no scheduler noise closes) so that the others finish first; action 9 throws.
class TinyEnv : public Env {
 public:
  TinyEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed), delay_ms_(c.Get<bool>("delay") && env_id < 2 ? 200 : 0) {}
  void Reset(Output& out) override {
    steps_ = 0;
    Write(out);
  }
  void Step(const ActionView& a, Output& out) override {
    if (a.Discrete() == 9) throw std::runtime_error("tiny env failed");
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
    ++steps_;
    out.SetReward(a.Discrete());
    out.SetTerminated(steps_ >= 3);
    Write(out);
  }

 private:
  void Write(Output& out) {
    out.Obs<int32_t>()[0] = env_id_;
    out.Obs<int32_t>()[1] = steps_;
  }
  int delay_ms_;
  int steps_ = 0;
};

EnvClass TinyType() {
  EnvClass t;
  t.name = "Tiny";
  t.keys = CommonConfigKeys();
  t.keys.push_back({"delay", false, "", {}});
  t.make_spec = [](const Config&) {
    Spec s;
    SpecBuilder b(&s);
    b.Obs("obs", DType::kInt32, {2});
    b.DiscreteAction(10);
    return s;
  };
  t.create = [](const Config& c, int id, uint64_t seed) -> std::unique_ptr<Env> {
    return std::make_unique<TinyEnv>(c, id, seed);
  };
  return t;
}

Config TinyConfig(std::map<std::string, ConfigValue> overrides) {
  std::map<std::string, ConfigValue> v;
  for (const auto& k : TinyType().keys) v[k.name] = k.default_value;
  for (auto& [k, val] : overrides) v[k] = val;
  return Config(std::move(v));
}

struct Rows {
  std::vector<int32_t> env_id, steps, elapsed;
  std::vector<uint8_t> final_obs_nonzero;
};

Rows Read(Engine& p, const RecvResult& r) {
  const Layout& L = p.layout();
  Rows out;
  auto i32 = [&](int idx, int row) { return reinterpret_cast<const int32_t*>(r.block + L.entries[idx].offset)[row]; };
  for (int row = 0; row < r.env_rows; ++row) {
    out.env_id.push_back(i32(L.env_id, row));
    out.steps.push_back(reinterpret_cast<const int32_t*>(r.block + L.entries[0].offset)[row * 2 + 1]);
    out.elapsed.push_back(i32(L.elapsed, row));
    if (L.final_begin >= 0) {
      const int32_t* f = reinterpret_cast<const int32_t*>(r.block + L.entries[L.final_begin].offset) + row * 2;
      out.final_obs_nonzero.push_back(f[0] != 0 || f[1] != 0);
    }
  }
  p.block_pool()->Release(r.block);
  return out;
}

std::vector<ActionInput> Actions(const std::vector<int32_t>& a) {
  return {{reinterpret_cast<const uint8_t*>(a.data()), DType::kInt32}};
}

TEST(Engine, SyncRowsFollowTheGivenEnvIdOrder) {
  Engine p(TinyType(), TinyConfig({{"num_envs", int64_t{4}}, {"num_threads", int64_t{3}}, {"delay", true}}));
  std::vector<int> all{0, 1, 2, 3}, ids{2, 0, 3};
  p.Send(all.data(), 4, {}, true, nullptr);
  Read(p, p.Recv({}));
  std::vector<int32_t> act{1, 2, 3};
  p.Send(ids.data(), 3, Actions(act), false, nullptr);
  Rows r = Read(p, p.Recv({}));
  EXPECT_EQ(r.env_id, (std::vector<int32_t>{2, 0, 3}));
  EXPECT_EQ(r.steps, (std::vector<int32_t>{1, 1, 1}));
}

TEST(Engine, AsyncBatchesFillInCompletionOrder) {
  // envs 0 and 1 are slow: envs 2 and 3 make the first batch, whichever threads run what
  Engine p(
      TinyType(),
      TinyConfig({{"num_envs", int64_t{4}}, {"batch_size", int64_t{2}}, {"num_threads", int64_t{4}}, {"delay", true}}));
  std::vector<int> all{0, 1, 2, 3};
  p.Send(all.data(), 4, {}, true, nullptr);
  Read(p, p.Recv({}));
  Read(p, p.Recv({}));
  std::vector<int32_t> act{1, 1, 1, 1};
  p.Send(all.data(), 4, Actions(act), false, nullptr);
  Rows first = Read(p, p.Recv({}));
  Rows second = Read(p, p.Recv({}));
  std::sort(first.env_id.begin(), first.env_id.end());
  std::sort(second.env_id.begin(), second.env_id.end());
  EXPECT_EQ(first.env_id, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(second.env_id, (std::vector<int32_t>{0, 1}));
}

TEST(Engine, AsyncRingKeepsEveryEnvAcrossManyBatches) {
  Engine p(TinyType(), TinyConfig({{"num_envs", int64_t{5}}, {"batch_size", int64_t{2}}, {"num_threads", int64_t{2}}}));
  std::vector<int> all{0, 1, 2, 3, 4};
  p.Send(all.data(), 5, {}, true, nullptr);
  std::vector<int> count(5, 0);
  std::vector<int32_t> act{1, 1};
  for (int i = 0; i < 200; ++i) {
    Rows r = Read(p, p.Recv({}));
    ASSERT_EQ(r.env_id.size(), 2u);
    for (int e : r.env_id) ++count[e];
    std::vector<int> ids(r.env_id.begin(), r.env_id.end());
    p.Send(ids.data(), 2, Actions(act), false, nullptr);
  }
  for (int c : count) EXPECT_GT(c, 0);
}

TEST(Engine, AsyncEnvErrorKeepsTheBatchForTheNextRecv) {
  // 3 envs, batch 2, and only two of them in flight: the failing batch is exactly {0, 1}
  Engine q(TinyType(), TinyConfig({{"num_envs", int64_t{3}}, {"batch_size", int64_t{2}}, {"num_threads", int64_t{1}}}));
  std::vector<int> two{0, 1};
  q.Send(two.data(), 2, {}, true, nullptr);
  Read(q, q.Recv({}));
  std::vector<int32_t> act{9, 4};
  q.Send(two.data(), 2, Actions(act), false, nullptr);
  try {
    q.Recv({});
    FAIL() << "no EnvError";
  } catch (const EnvError& e) {
    EXPECT_EQ(e.env_ids, std::vector<int>{0});
    EXPECT_TRUE(e.batch_kept);
  }
  EXPECT_THROW(q.Send(two.data(), 1, Actions(act), false, nullptr), std::invalid_argument);  // still pending
  Rows r = Read(q, q.Recv({}));
  ASSERT_EQ(r.env_id.size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(r.elapsed[i], r.env_id[i] == 0 ? 0 : 1);
}

TEST(Engine, SameStepFinalRowsAreZeroUnlessAnEpisodeEnded) {
  Engine p(TinyType(), TinyConfig({{"num_envs", int64_t{3}}, {"autoreset_mode", std::string("same_step")}}));
  std::vector<int> all{0, 1, 2};
  p.Send(all.data(), 3, {}, true, nullptr);
  Read(p, p.Recv({}));
  std::vector<int32_t> act{1, 1, 1};
  for (int t = 1; t <= 7; ++t) {
    p.Send(all.data(), 3, Actions(act), false, nullptr);
    Rows r = Read(p, p.Recv({}));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(r.final_obs_nonzero[i], t % 3 == 0) << "step " << t;
  }
}

TEST(Engine, ActionsAreRangeCheckedInTheirOwnDtype) {
  Engine p(TinyType(), TinyConfig({{"num_envs", int64_t{2}}}));
  std::vector<int> all{0, 1};
  p.Send(all.data(), 2, {}, true, nullptr);
  Read(p, p.Recv({}));
  std::vector<int64_t> wide{1, (int64_t{1} << 32) + 2};  // would wrap to 2 as int32
  try {
    p.Send(all.data(), 2, {{reinterpret_cast<const uint8_t*>(wide.data()), DType::kInt64}}, false, nullptr);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "action 'action' row 1 is 4294967298, outside the valid range [0, 9]");
  }
  std::vector<int64_t> ok{1, 8};
  p.Send(all.data(), 2, {{reinterpret_cast<const uint8_t*>(ok.data()), DType::kInt64}}, false, nullptr);
  EXPECT_EQ(Read(p, p.Recv({})).steps, (std::vector<int32_t>{1, 1}));
}

}  // namespace
}  // namespace pp

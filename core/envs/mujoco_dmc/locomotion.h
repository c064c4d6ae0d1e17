// Helpers the locomotion domains (cheetah, hopper, walker, humanoid, humanoid_CMU, swimmer, fish) share:
// dm_control's joint randomizer, numpy's summation order for means, the small-control reward term and the
// egocentric vector of the humanoids' extremities.
#pragma once

#include <mujoco/mujoco.h>

#include <cmath>
#include <random>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

// dm_control's suite.utils.randomizers.randomize_limited_and_rotational_joints, from the env's own generator
// (draws in dm_control's order: joint by joint, and within a joint the same sequence of uniform / normal draws).
// For every joint, in model order:
//   limited hinge/slide: qpos ~ U(range); limited ball: a random rotation of at most range[1] about a random axis;
//   unlimited hinge: U(-pi, pi); unlimited ball: a uniformly random unit quaternion (normalised N(0, 1)^4);
//   free: the orientation only, a normalised U(0, 1)^4 (dm_control keeps this biased draw "to not change
//   benchmark results"); the free joint's position is left as it is.
template <class Gen>
void RandomizeLimitedAndRotationalJoints(const mjModel* m, mjData* d, Gen& gen) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * unit(gen); };
  auto normalize4 = [](double* q) {
    const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int i = 0; i < 4; ++i) q[i] /= n;
  };
  for (int j = 0; j < m->njnt; ++j) {
    double* qpos = d->qpos + m->jnt_qposadr[j];
    const double lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1];
    switch (m->jnt_type[j]) {
      case mjJNT_HINGE:
        *qpos = m->jnt_limited[j] ? uniform(lo, hi) : uniform(-mjPI, mjPI);
        break;
      case mjJNT_SLIDE:
        if (m->jnt_limited[j]) *qpos = uniform(lo, hi);
        break;
      case mjJNT_BALL:
        if (m->jnt_limited[j]) {
          double axis[3] = {normal(gen), normal(gen), normal(gen)};
          mju_normalize3(axis);
          mju_axisAngle2Quat(qpos, axis, unit(gen) * hi);
        } else {
          for (int i = 0; i < 4; ++i) qpos[i] = normal(gen);
          normalize4(qpos);
        }
        break;
      case mjJNT_FREE:
        for (int i = 3; i < 7; ++i) qpos[i] = unit(gen);
        normalize4(qpos + 3);
        break;
    }
  }
}

// np.sum's result over a contiguous float64 array whose element i is at(i): numpy adds in pairwise blocks of 8
// (in order below 8), so a reward that averages over actuators agrees with dm_control's to the last bit. Each
// element is read once, so `at` may compute it (no scratch array on the step path).
template <class At>
double NumpySum(int n, const At& at, int begin = 0) {
  if (n < 8) {
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += at(begin + i);
    return s;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = at(begin + j);
    int i = 8;
    for (; i < n - n % 8; i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += at(begin + i + j);
    }
    double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) s += at(begin + i);
    return s;
  }
  const int half = n / 2 - (n / 2) % 8;
  return NumpySum(half, at, begin) + NumpySum(n - half, at, begin + half);
}

// tolerance(ctrl, margin=1, value_at_margin=0, sigmoid='quadratic').mean(): 1 at zero control, falling to 0 at
// |ctrl| = 1 (hopper's stand task and the humanoids).
inline double SmallControl(const mjModel* m, const mjData* d) {
  const int nu = static_cast<int>(m->nu);
  return NumpySum(nu, [d](int i) { return Tolerance(d->ctrl[i], 0.0, 0.0, 1.0, Sigmoid::kQuadratic, 0.0); }) / nu;
}

}  // namespace pp::mujoco_dmc

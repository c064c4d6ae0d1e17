// Helpers the locomotion domains (hopper, humanoid, humanoid_CMU) share: numpy's summation order for means and
// dm_control's small-control reward term.
#pragma once

#include <mujoco/mujoco.h>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

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

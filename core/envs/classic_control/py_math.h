// Arithmetic helpers that reproduce how CPython/NumPy evaluate gymnasium's Python expressions, so the classic
// control envs agree with gymnasium to the last bit (which matters for chaotic systems such as Acrobot, where a
// one-ulp difference grows until trajectories part).
#pragma once

#include <cmath>

namespace pp::classic_control {

// gymnasium writes `x**2`; CPython floats and NumPy scalars evaluate it with the C library's pow(), which is not
// always the correctly rounded x*x. GCC would fold pow(x, 2.0) into x*x, so the exponent is hidden from it.
inline double PyPow2(double x) {
  static volatile double two = 2.0;
  return std::pow(x, two);
}
// The same for a NumPy float32 scalar (`u**2` with u float32: powf).
inline float PyPow2(float x) {
  static volatile float two = 2.0f;
  return std::pow(x, two);
}

}  // namespace pp::classic_control

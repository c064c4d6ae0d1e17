// What pybox2d adds to Box2D's C++ API, where it changes the physics gymnasium gets; and the contact listener
// the Box2D envs share.
#pragma once

#include <Box2D/Box2D.h>

namespace pp::box2d {

// pybox2d's revoluteJointDef(bodyA=..., bodyB=...) sets referenceAngle = bodyB.angle - bodyA.angle (Python
// doubles from the two float32 angles, stored back as float32) unless referenceAngle is given; Box2D's C++
// default is 0.
inline float32 PyboxReferenceAngle(const b2Body* a, const b2Body* b) {
  return static_cast<float32>(static_cast<double>(b->GetAngle()) - static_cast<double>(a->GetAngle()));
}

// gymnasium's contact detectors (ContactDetector, FrictionDetector) as one b2ContactListener: both events go to
// the env's Touch(body a, body b, begin).
template <class E>
class ContactRelay : public b2ContactListener {
 public:
  explicit ContactRelay(E* env) : env_(env) {}
  void BeginContact(b2Contact* c) override {
    env_->Touch(c->GetFixtureA()->GetBody(), c->GetFixtureB()->GetBody(), true);
  }
  void EndContact(b2Contact* c) override {
    env_->Touch(c->GetFixtureA()->GetBody(), c->GetFixtureB()->GetBody(), false);
  }

 private:
  E* env_;
};

}  // namespace pp::box2d

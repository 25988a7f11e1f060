#pragma once

// The hand-written format of kept requests and answers (controller/engine/engine_codec_v2.h),
// written as releases before the Protobuf format wrote it, so that tests can make journals that
// such a release kept.

#include <string>

#include "controller/engine/engine_types.h"

namespace jackpot::testing {

// `value` in version 2.
template <typename T>
std::string encode_version_2(T value);

}  // namespace jackpot::testing

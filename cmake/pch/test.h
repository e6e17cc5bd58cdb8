// Precompiled header for the gtest executables (cmake/pch.cmake): the library one plus
// GoogleTest and GoogleMock.
#include "cmake/pch/common.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

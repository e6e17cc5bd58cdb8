// The project's test data files (tests/data/): tab-separated facts the tests hold tfjit to.
#ifndef TFJIT_TESTS_TESTLIB_TEST_DATA_H_
#define TFJIT_TESTS_TESTLIB_TEST_DATA_H_

#include <string>
#include <vector>

namespace tfjit::testing {

// The rows of tests/data/`name`, split at tabs; blank lines and '#' comments are left out.
// The source folder is $TFJIT_SOURCE_DIR (ctest sets it for every test), else the build's own.
// A file that cannot be read fails the calling test (and gives no rows).
std::vector<std::vector<std::string>> ReadTestDataTsv(const std::string& name);

}  // namespace tfjit::testing

#endif  // TFJIT_TESTS_TESTLIB_TEST_DATA_H_

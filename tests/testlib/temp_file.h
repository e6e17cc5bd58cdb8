// Files a test writes (graphs, models, feeds) in a folder of the test process's own.
#ifndef TFJIT_TESTS_TESTLIB_TEMP_FILE_H_
#define TFJIT_TESTS_TESTLIB_TEMP_FILE_H_

#include <string>

namespace tfjit::testing {

// A folder under gtest's TempDir() belonging to this process (its id in the name), created on
// first use. ctest runs tests, and gtest shards of one binary, as parallel processes: with a
// folder each, two of them never write the same file. The folder is removed when the process
// exits normally.
std::string TestTempDir();

// Writes `contents` (bytes, unchanged) to TestTempDir()/`name` and returns the path. `name`
// is a plain file name; any '/' in it (from parameterized test names) becomes '_'.
std::string WriteTempFile(std::string name, const std::string& contents);

}  // namespace tfjit::testing

#endif  // TFJIT_TESTS_TESTLIB_TEMP_FILE_H_

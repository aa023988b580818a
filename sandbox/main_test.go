package sandbox

// The test binary serves as the Landlock inner stage (Exec re-executes os.Executable(),
// which is this binary during tests) through the package's init: no TestMain needed.

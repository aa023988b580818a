// Package departments owns departments, workspace roots and authorized places, the
// answer to "is this place known?", and the watching of department directories.
//
// It imports no other Airlock package.
package departments

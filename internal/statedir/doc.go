// Package statedir is the directory beside rule documents where bulwark
// keeps what is not a document: the file backend's lock files and
// instance records (package datasource/file), and the CLI's history of a
// file (internal/rulechange). It is .bulwark in the documents' directory,
// made with a .gitignore that ignores everything in it, so that a
// document kept in git is committed alone.
package statedir

// Package codec reaches what the codecs of package converter can do
// besides Convert and Encode, which bulwark's own packages use and users
// do not call:
//
//   - [Inspect] decodes and reports what the document holds that was
//     accepted but ignored: the fields of older Sentinel releases that
//     Java ignores today (DegradeRule's cut and passCount, ParamFlowRule's
//     blockGrade, the dashboard's avgLoad), as warnings (converter.Problem)
//     in document order, also with an error (none when the document is
//     not JSON). A datasource's Readable logs them; the CLI prints them.
//   - [EncodeOver] writes a value over the document it was read from,
//     keeping what the value does not model (the text of unchanged rules,
//     the dashboard's entity fields): package converter's documentation,
//     "Writing over a document", has the details. A datasource's
//     Writable writes back with it; so does the CLI.
//   - [EncodeCompact] writes the compact canonical form: each rule with
//     only the fields that differ from Java's defaults (and those a rule
//     must have), in Java's field order, one rule per line; a rule set
//     without the kinds that have no rules. It decodes to the same rules
//     as Encode's document. It is the form people read and keep: bulwark
//     fmt and suggest print it, and so does the live page's suggestions.
//
// Every codec of package converter has the three; with another Converter
// or Encoder, each function falls back on Convert or Encode.
package codec

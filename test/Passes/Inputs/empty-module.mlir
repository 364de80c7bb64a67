// A module with nothing in it: test/Passes/every-pass.test runs every
// registered hetero pass and pipeline on it.
module {}

#if canImport(Glibc)
import Glibc
#endif

// `config-fuzz [CASES] [SEED]`: generated configuration files of hostile structure through
// the whole parse (scripts/fuzz-config builds it in release and runs a million). Exits 1
// if any outcome broke the contract; a crash or a hang is the failure it exists to find.
// `config-fuzz --dump INDEX [SEED]` prints one generated case, to reproduce it.
var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--dump" {
    let index = arguments.dropFirst().first.flatMap { Int($0) } ?? 0
    var generator = StructuralTOMLGenerator(seed: arguments.dropFirst(2).first.flatMap { UInt64($0) } ?? 42)
    for _ in 0 ..< index { _ = generator.next() }
    print(generator.next(), terminator: "")
    exit(0)
}
let cases = arguments.first.flatMap { Int($0) } ?? 1_000_000
let seed = arguments.dropFirst().first.flatMap { UInt64($0) } ?? 42
let summary = runConfigFuzz(cases: cases, seed: seed) { done in
    print("… \(done) cases")
    fflush(nil)
}
print("config fuzz (seed \(seed)): \(summary.description)")
for violation in summary.violations.prefix(20) { print("violation: \(violation)") }
exit(summary.violations.isEmpty ? 0 : 1)

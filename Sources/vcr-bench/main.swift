// `swift run -c release vcr-bench [--quick] [--server URL]`: see Docs/Performance.md and Bench.swift.
import Foundation

exit(await Bench.main(Array(CommandLine.arguments.dropFirst())))

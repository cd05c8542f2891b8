import Foundation
import VCRFileCommands

// vcr: inspect, check, convert, redact and serve HTTPVCR cassettes. See Docs/CLI.md.

/// The file-only subcommands (VCRFileCommands, which needs the cassettes alone), `redact` with the filters recording
/// uses, and `serve`, which answers from a cassette through HTTPVCR.
let tool = VCRTool(commands: VCRTool.fileCommands(redacting: redactWithRecordingFilters) + [ServeCommand.command])

// Writing to a closed pipe (`vcr show x | head`) must end quietly, not with SIGPIPE's status.
signal(SIGPIPE, SIG_IGN)
exit(tool.run(Array(CommandLine.arguments.dropFirst())).rawValue)

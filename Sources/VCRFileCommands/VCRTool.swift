import Foundation
import HTTPVCRCassettes

/// The `vcr` command line (see Docs/CLI.md): its subcommands, and what runs one. The executable adds the ones that
/// need the runtime (`serve`) to ``fileCommands(redacting:)``.
package struct VCRTool {
    /// The subcommands, in the order help lists them.
    package var commands: [Command]

    /// A tool with these subcommands.
    package init(commands: [Command]) {
        self.commands = commands
    }

    /// The subcommands that only read and write cassette files: show, diff, lint, convert, and redact with the filters
    /// `redact` stands for.
    package static func fileCommands(redacting redact: @escaping Redactor) -> [Command] {
        [
            ShowCommand.command, DiffCommand.command, LintCommand.command, ConvertCommand.command,
            RedactCommand.command(redacting: redact),
        ]
    }

    /// The subcommand of this name.
    package func command(named name: String) -> Command? {
        commands.first { $0.name == name }
    }

    /// Runs one command line and returns the exit status; everything is printed on the way.
    package func run(_ arguments: [String]) -> ExitStatus {
        guard let first = arguments.first else {
            Console.error(Help.overview(of: commands))
            return .failure
        }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "-h", "--help":
            Console.out(Help.overview(of: commands))
            return .success
        case "--version", "version":
            Console.out("vcr \(vcrVersion)")
            return .success
        case "help":
            return help(rest)
        default:
            break
        }
        guard let command = self.command(named: first) else {
            var message = first.hasPrefix("-") ? "unknown option '\(first)'" : "unknown subcommand '\(first)'"
            let names = first.hasPrefix("-") ? ["--help", "--version"] : commands.map(\.name) + ["help"]
            if let suggestion = ArgumentParser.closest(to: first, in: names) {
                message += " (did you mean '\(suggestion)'?)"
            }
            Console.error("error: \(message)")
            Console.error("")
            Console.error("USAGE: vcr <subcommand> [<arguments>] [<options>]")
            Console.error("  See 'vcr help' for the subcommands.")
            return .failure
        }
        do {
            let parsed = try ArgumentParser.parse(rest, for: command)
            if parsed.wantsHelp {
                Console.out(Help.help(for: command))
                return .success
            }
            return try command.run(parsed).get()
        } catch {
            Console.error("error: \(error.message)")
            if let name = error.usageOf, let usageCommand = self.command(named: name) {
                Console.error("")
                Console.error(Help.usage(of: usageCommand))
                Console.error("  See 'vcr \(usageCommand.name) --help' for more information.")
            }
            return error.status
        }
    }

    /// `vcr help`, `vcr help <subcommand>`.
    func help(_ arguments: [String]) -> ExitStatus {
        guard let name = arguments.first else {
            Console.out(Help.overview(of: commands))
            return .success
        }
        if name == "help" {
            Console.out("OVERVIEW: Show help for a subcommand.\n\nUSAGE: vcr help [<subcommand>]")
            return .success
        }
        guard let command = self.command(named: name) else {
            var message = "error: unknown subcommand '\(name)'"
            if let suggestion = ArgumentParser.closest(to: name, in: commands.map(\.name)) {
                message += " (did you mean '\(suggestion)'?)"
            }
            Console.error(message)
            Console.error("")
            Console.error("USAGE: vcr help [<subcommand>]")
            return .failure
        }
        Console.out(Help.help(for: command))
        return .success
    }
}

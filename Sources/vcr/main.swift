import Foundation

// vcr: inspect, check, convert and redact HTTPVCR cassettes. See Docs/CLI.md.

/// Runs one command line and returns the exit status; everything is printed on the way.
func runVCR(_ arguments: [String]) -> ExitStatus {
    guard let first = arguments.first else {
        Console.error(Help.overview)
        return .failure
    }
    let rest = Array(arguments.dropFirst())
    switch first {
    case "-h", "--help":
        Console.out(Help.overview)
        return .success
    case "--version", "version":
        Console.out("vcr \(vcrVersion)")
        return .success
    case "help":
        return help(rest)
    default:
        break
    }
    guard let command = Help.command(named: first) else {
        var message = first.hasPrefix("-") ? "unknown option '\(first)'" : "unknown subcommand '\(first)'"
        let names = first.hasPrefix("-") ? ["--help", "--version"] : Help.commands.map(\.name) + ["help"]
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
        if let name = error.usageOf, let usageCommand = Help.command(named: name) {
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
        Console.out(Help.overview)
        return .success
    }
    if name == "help" {
        Console.out("OVERVIEW: Show help for a subcommand.\n\nUSAGE: vcr help [<subcommand>]")
        return .success
    }
    guard let command = Help.command(named: name) else {
        var message = "error: unknown subcommand '\(name)'"
        if let suggestion = ArgumentParser.closest(to: name, in: Help.commands.map(\.name)) {
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

// Writing to a closed pipe (`vcr show x | head`) must end quietly, not with SIGPIPE's status.
signal(SIGPIPE, SIG_IGN)
exit(runVCR(Array(CommandLine.arguments.dropFirst())).rawValue)

import Foundation

/// The tool's version, shown by `vcr --version`.
let vcrVersion = "0.1.0"

/// A subcommand: its help text, its options, and what it does.
package struct Command {
    var name: String
    /// One line, for the list of subcommands and the OVERVIEW.
    var abstract: String
    /// `vcr <name> …` lines, without the `vcr <name> ` prefix.
    var usage: [String]
    /// Positional arguments as (name, explanation).
    var arguments: [(String, String)]
    var options: [OptionSpec]
    /// Paragraphs after the options.
    var discussion: String = ""
    var examples: [String] = []
    /// What it does. Stored as a `Result`: a stored function type with typed throws needs runtime support macOS 13
    /// lacks (swiftlang/swift#74971).
    var run: (ParsedArguments) -> Result<ExitStatus, CommandError>

    /// A subcommand with this help and this action.
    package init(
        name: String,
        abstract: String,
        usage: [String],
        arguments: [(String, String)],
        options: [OptionSpec],
        discussion: String = "",
        examples: [String] = [],
        run: @escaping (ParsedArguments) -> Result<ExitStatus, CommandError>
    ) {
        self.name = name
        self.abstract = abstract
        self.usage = usage
        self.arguments = arguments
        self.options = options
        self.discussion = discussion
        self.examples = examples
        self.run = run
    }
}

enum Help {
    static let width = 100
    static let column = 26

    /// What `vcr` and `vcr --help` print: the subcommands, their options, the exit statuses.
    static func overview(of commands: [Command]) -> String {
        var lines = [
            "OVERVIEW: Inspect, compare, check, convert, redact and serve HTTPVCR cassettes.",
            "",
            "Reads HTTPVCR's JSON and property-list cassettes, HAR 1.2, YAHTTPVCR and VCR.py JSON cassettes.",
            "",
            "USAGE: vcr <subcommand> [<arguments>] [<options>]",
            "",
            "OPTIONS:",
            row("--version", "Show the version."),
            row("-h, --help", "Show help information."),
            "",
            "SUBCOMMANDS:",
        ]
        for command in commands { lines.append(row(command.name, command.abstract)) }
        lines.append(row("help", "Show help for a subcommand."))
        lines += [
            "",
            "  See 'vcr help <subcommand>' for detailed help.",
            "",
            "EXIT STATUS:",
            row("0", "Success; for lint, nothing found."),
            row("1", "lint found secrets in clear; diff found differences."),
            row("2", "A usage mistake, or an input that cannot be read."),
        ]
        return lines.joined(separator: "\n")
    }

    /// The `USAGE:` block of a command, also printed after a usage error.
    static func usage(of command: Command) -> String {
        let prefix = "USAGE: "
        let indent = String(repeating: " ", count: prefix.count)
        let lead = "vcr \(command.name) "
        return command.usage.enumerated().map { index, line in
            // A line that starts with spaces continues the one before it.
            if line.hasPrefix(" ") {
                return indent + String(repeating: " ", count: lead.count) + line.trimmingCharacters(in: .whitespaces)
            }
            return (index == 0 ? prefix : indent) + lead + line
        }.joined(separator: "\n")
    }

    static func help(for command: Command) -> String {
        var lines = ["OVERVIEW: \(command.abstract)", "", usage(of: command), ""]
        if !command.arguments.isEmpty {
            lines.append("ARGUMENTS:")
            for (name, text) in command.arguments { lines.append(row(name, text)) }
            lines.append("")
        }
        lines.append("OPTIONS:")
        for option in command.options { lines.append(row(option.synopsis, option.help)) }
        lines.append(row("-h, --help", "Show help information."))
        if !command.discussion.isEmpty {
            lines.append("")
            lines.append(wrap(command.discussion, indent: 0))
        }
        if !command.examples.isEmpty {
            lines.append("")
            lines.append("EXAMPLES:")
            for example in command.examples { lines.append("  \(example)") }
        }
        return lines.joined(separator: "\n")
    }

    /// `  name      text`, the text wrapped at ``width`` and aligned at ``column``.
    static func row(_ name: String, _ text: String) -> String {
        let head = "  " + name
        let body = wrap(text, indent: column)
        let trimmed = String(body.dropFirst(column))
        if head.count + 2 <= column {
            return head + String(repeating: " ", count: column - head.count) + trimmed
        }
        return head + "\n" + body
    }

    /// Wraps each paragraph (blank-line separated) of `text` at ``width``, every line indented by `indent`.
    /// Lines starting with spaces are kept as they are (examples inside a discussion).
    static func wrap(_ text: String, indent: Int) -> String {
        let pad = String(repeating: " ", count: indent)
        var output: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty || line.hasPrefix(" ") {
                output.append(line.isEmpty ? "" : pad + line)
                continue
            }
            var current = ""
            for word in line.split(separator: " ") {
                if !current.isEmpty, pad.count + current.count + 1 + word.count > width {
                    output.append(pad + current)
                    current = ""
                }
                current += current.isEmpty ? String(word) : " " + word
            }
            output.append(pad + current)
        }
        return output.joined(separator: "\n")
    }
}

/// stdout and stderr. `print` is buffered; `exit` flushes it.
package enum Console {
    package static func out(_ text: String) {
        print(text)
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

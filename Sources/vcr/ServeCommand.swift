import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR
import VCRFileCommands

/// `vcr serve CASSETTE --port N`: answers any HTTP client on 127.0.0.1 from a cassette, recording through
/// `--upstream` in a mode that records.
enum ServeCommand {
    /// The host requests are matched against without `--upstream`: matching then ignores scheme, host and port.
    static let placeholderOrigin = "http://vcr-serve.invalid"

    static var command: Command {
        Command(
            name: "serve",
            abstract: "Answer HTTP clients on 127.0.0.1 from a cassette, recording through an upstream.",
            usage: ["<cassette> --port <port> [--upstream <url>] [--record-mode <mode>] [--no-repeats]"],
            arguments: [("<cassette>", "The cassette to answer from (and record into): HTTPVCR JSON or plist.")],
            options: [
                .value("port", "<port>", short: "p", "The port on 127.0.0.1 to listen on; 0 picks a free one."),
                .value("upstream", "<url>", "The server requests are matched as sent to, and recorded from."),
                .value("record-mode", "<mode>", "once (the default), new, never (or none), all."),
                .flag("repeats", "A recording answers as often as it is asked (the default)."),
                .flag("no-repeats", "Each recording answers once; asked again, a request gets 500 no-match (or is recorded)."),
                .value("read-timeout", "<seconds>", "How long a client may take to send a request (default 30)."),
            ],
            discussion: """
                Prints the URL it serves on as its first line, then answers until SIGINT or SIGTERM, saves the \
                cassette if it recorded anything, and exits 0.

                A request to http://127.0.0.1:<port>/path?query is matched as if sent to the upstream's scheme, \
                host and port with that path and query; without --upstream, by method, path and query only. In a \
                mode that records, a request that does not match is forwarded to the upstream and taped. A request \
                that matches nothing gets 500 with X-VCR-Error: no-match, its body the explanation.

                Repeats are on by default: a stand-in for a server answers a request every time it is asked, as \
                stub servers (WireMock, Hoverfly, Mountebank) do, so that a client's retries, health checks and \
                polling are answered too. A request recorded several times gets its answers in turn, then the last \
                one again. With --no-repeats each recording answers once, and a request asked more often than it \
                was recorded gets the no-match answer: for a test that checks the client asks no more than that. \
                See Docs/CrossProcess.md.
                """,
            examples: [
                "vcr serve Cassettes/api.json --port 8080",
                "vcr serve Cassettes/api.json --port 0 --upstream https://api.example.com --record-mode new",
            ],
            run: { arguments in Result { () throws(CommandError) in try run(arguments) } }
        )
    }

    static func run(_ arguments: ParsedArguments) throws(CommandError) -> ExitStatus {
        let path = try arguments.onlyPositional(named: "<cassette>", of: command)
        let options = try Options(arguments)
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        do {
            try VCR.insertCassette { configuration in
                configuration.cassettePath = absolute
                configuration.recordMode = options.recordMode
                configuration.playbackMode = .momentary
                configuration.allowsPlaybackRepeats = options.repeats
                configuration.mismatchAdvice = mismatchAdvice
                if options.upstream == nil { configuration.matchers = [.method, .path, .query] }
            }
        } catch {
            throw CommandError(message: "\(path): \(error.message)")
        }
        // The default action would end the process before the cassette is saved: the sources below handle them.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let stopped = DispatchSemaphore(value: 0)
        let sources = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stopped.signal() }
            source.resume()
            return source
        }
        let server: LoopbackServer
        do {
            server = try LoopbackServer(
                port: options.port,
                readTimeout: options.readTimeout,
                handler: ServeHandler(upstream: options.upstream).answerWaiting
            )
        } catch {
            _ = try? VCR.ejectCassette()
            throw CommandError(message: error.description)
        }
        Console.out(server.url.absoluteString)
        fflush(nil)
        stopped.wait()
        server.stop()
        withExtendedLifetime(sources) {}
        do {
            try VCR.ejectCassette()
        } catch {
            throw CommandError(message: "\(path): could not save: \(error.message)")
        }
        return .success
    }

    /// What a no-match answer says to do, in this command's options: its users have no configuration to edit.
    static let mismatchAdvice = MismatchAdvice(
        toRecord: "restart vcr serve with --record-mode new (and an --upstream to record from), "
            + "or delete the cassette to record anew",
        toRecordAnew: "restart vcr serve with --record-mode all (and an --upstream to record from), or delete the "
            + "cassette to record anew; --record-mode new would keep the recording this request replaces, never "
            + "played again",
        toRepeat: "restart vcr serve without --no-repeats"
    )

    struct Options {
        var port: UInt16
        var upstream: URL?
        var recordMode = RecordMode.once
        /// On unless --no-repeats: see the discussion in ``ServeCommand/command``.
        var repeats = true
        var readTimeout: TimeInterval = 30

        init(_ arguments: ParsedArguments) throws(CommandError) {
            guard let text = arguments.value("port") else { throw .usage("--port is required", of: command) }
            guard let port = UInt16(text) else {
                throw .usage("--port '\(text)' is not a port number (0 to 65535)", of: command)
            }
            self.port = port
            if let text = arguments.value("upstream") {
                guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                      url.host?.isEmpty == false
                else { throw .usage("--upstream '\(text)' is not an http or https URL", of: command) }
                upstream = url
            }
            if let text = arguments.value("record-mode") {
                guard let mode = RecordMode(rawValue: text), mode != .passthrough else {
                    throw .usage("--record-mode '\(text)' is not one of once, new, never, none, all", of: command)
                }
                recordMode = mode
            }
            if arguments.flag("repeats"), arguments.flag("no-repeats") {
                throw .usage("--repeats and --no-repeats cannot both be given", of: command)
            }
            repeats = !arguments.flag("no-repeats")
            if let text = arguments.value("read-timeout") {
                guard let seconds = TimeInterval(text), seconds > 0 else {
                    throw .usage("--read-timeout '\(text)' is not a number of seconds", of: command)
                }
                readTimeout = seconds
            }
        }
    }
}

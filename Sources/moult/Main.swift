import MoultCommand

/// `moult`: the command line with no policy class compiled in (a mapping naming one needs `--policy`).
@main
struct Main {
    static func main() async {
        await MoultCommand.runCommandLine()
    }
}

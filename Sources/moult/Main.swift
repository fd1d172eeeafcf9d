import ArgumentParser
import MoultCommand

@main
struct Main {
    static func main() async {
        await MoultCommand.main()
    }
}

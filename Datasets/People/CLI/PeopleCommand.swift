import ArgumentParser
import MoultCommand
import MoultMigration
import MoultPeople

/// `moult-people`: Moult's command line with the People scenario's own policies compiled in, and its
/// store generator.
///
/// This is the worked example of "your own CLI with your policies": a root command whose
/// configuration is Moult's (``MoultCommand/makeConfiguration(commandName:abstract:discussion:adding:)``)
/// with a subcommand of its own, and a `main` that registers the policy classes its mapping models
/// name before running the command line.
@main
struct PeopleCommand: AsyncParsableCommand {
    static let configuration = MoultCommand.makeConfiguration(
        commandName: "moult-people",
        abstract: "Moult with the People scenario's policies (AdultToCompanyPolicy, ChildToSchoolPolicy) and its generator.",
        discussion: """
            Every moult subcommand, plus `generate`. The People mappings (Datasets/People/Mappings) name the \
            policy classes AdultToCompanyPolicy and ChildToSchoolPolicy, compiled into this command \
            (Datasets/People/Swift/UniquingPolicy.swift).
            """,
        adding: [GenerateCommand.self])

    static func main() async {
        var policies = PolicyRegistry()
        PeoplePolicies.register(in: &policies)
        await MoultCommand.runCommandLine(Self.self, policies: policies)
    }
}


import ArgumentParser

/// `moult model extract`: work with the model itself, apart from any store's data.
struct ModelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Work with a model: write out the model a store carries.",
        subcommands: [ModelExtractCommand.self]
    )
}

import ArgumentParser

/// `--max-rate` and `--pause-file`: pacing and pausing at chunk boundaries.
struct ControlOptions: ParsableArguments {
    @Option(help: ArgumentHelp("At most this many source objects per second, on average over the run (paced at chunk boundaries).", valueName: "objects-per-s"))
    var maxRate: Double?

    @Option(help: ArgumentHelp("While a file exists at PATH, the run pauses at the next chunk boundary (it says so in its events and `moult status`).", valueName: "path"))
    var pauseFile: String?

    func validate() throws {
        if let maxRate, !(maxRate > 0 && maxRate.isFinite) { throw ValidationError("--max-rate must be a positive number of objects per second") }
    }
}

import MoultMigration

/// The deterministic random source and the name tables of the People generator.
///
/// The random source is MoultMigration's `SplitMix64`: the same sequence on every platform for a
/// seed, so a generated store is reproducible byte for byte.
extension SplitMix64 {
    /// A number in `0..<bound` (bound > 0), without modulo bias worth caring about for tables this size.
    mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }

    /// True with probability `percent`/100.
    mutating func chance(_ percent: Int) -> Bool {
        below(100) < percent
    }
}

/// Name tables: a few thousand first and last names, a few hundred companies and schools, built from
/// syllables so that the tables are large without a large source file.
enum PeopleNames {
    private static let firstStarts = [
        "Al", "Ar", "Ba", "Be", "Bri", "Ca", "Cha", "Cla", "Da", "De", "Do", "E", "El", "Em", "Fa", "Fe", "Fi",
        "Ga", "Ge", "Gra", "Ha", "He", "I", "Ja", "Je", "Jo", "Ka", "Ke", "Ki", "La", "Le", "Li", "Lu", "Ma",
        "Me", "Mi", "Mo", "Na", "Ne", "No", "O", "Pa", "Pe", "Ra", "Re", "Ro", "Sa", "Se", "Si", "So", "Ta",
        "Te", "Ti", "To", "U", "Va", "Ve", "Wi", "Ya", "Za",
    ]
    private static let firstEnds = [
        "ra", "na", "lia", "ne", "ron", "vin", "den", "la", "rie", "mon", "ssa", "tan", "lix", "nor", "dan",
        "ric", "lyn", "sha", "ton", "bert", "mir", "wen", "ka", "lo", "ris", "nah", "tor", "via", "dro", "mas",
        "rin", "lie", "ther", "vi", "nia", "sel", "gan", "ley", "ma", "ren",
    ]
    private static let lastStarts = [
        "Ab", "Ack", "Bal", "Bar", "Ben", "Black", "Brook", "Carl", "Cole", "Dal", "Dun", "Ed", "Fair", "Fern",
        "Gar", "Gold", "Hal", "Hart", "Hill", "Holm", "Kes", "King", "Lang", "Lind", "Mar", "Mill", "Mor",
        "Nor", "Oak", "Pem", "Ram", "Red", "Ros", "Sal", "Sand", "Sher", "Stan", "Stone", "Thorn", "Val",
        "Wal", "West", "Whit", "Win", "Wood", "York",
    ]
    private static let lastEnds = [
        "son", "ford", "ley", "ton", "man", "well", "wood", "berg", "field", "stein", "by", "ham", "more", "ridge",
        "worth", "dale", "er", "ing", "land", "ston", "brook", "croft", "gate", "hurst", "mont", "shaw", "ville",
        "wick", "den", "hart", "low", "mere", "ner", "rick", "sey", "tree", "vall", "wyn", "ak", "en",
    ]
    private static let companyWords = [
        "Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Tyrell", "Cyberdyne", "Soylent", "Hooli",
        "Vandelay", "Wonka", "Gringotts", "Oscorp", "Aperture", "Massive", "Dynamic", "Blue", "Red", "Green",
    ]
    private static let companyKinds = [
        "Industries", "Systems", "Labs", "Works", "Foods", "Motors", "Logistics", "Media", "Energy", "Bank",
        "Software", "Robotics", "Textiles", "Pharma", "Airlines",
    ]
    private static let schoolWords = [
        "Oak", "Maple", "Cedar", "River", "Lake", "Hill", "Valley", "North", "South", "East", "West", "Central",
        "Sunny", "Green", "Harbor", "Pine", "Willow", "Meadow", "Bridge", "Park",
    ]
    private static let schoolKinds = [
        "Primary", "Elementary", "Academy", "School", "Middle School", "High School", "Prep", "Montessori",
        "Grammar School", "Day School", "Lyceum", "College", "Institute", "Community School", "Charter School",
    ]
    static let states = [
        "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY",
        "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND",
        "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY",
    ]
    private static let streetNames = [
        "Main", "Oak", "Pine", "Maple", "Cedar", "Elm", "Washington", "Lake", "Hill", "Park", "Sunset",
        "Highland", "Church", "Mill", "River", "Spring", "Forest", "Meadow", "Ridge", "Valley",
    ]
    private static let streetKinds = ["Street", "Avenue", "Road", "Lane", "Drive", "Way", "Court", "Place"]

    /// 2,400 first names.
    static let first: [String] = firstStarts.flatMap { start in firstEnds.map { start + $0 } }
    /// 1,840 last names.
    static let last: [String] = lastStarts.flatMap { start in lastEnds.map { start + $0 } }
    /// 300 company names, `Apple` first.
    static let companies: [String] = ["Apple"] + companyWords.flatMap { word in companyKinds.map { "\(word) \($0)" } }.dropLast()
    /// 300 school names.
    static let schools: [String] = schoolWords.flatMap { word in schoolKinds.map { "\(word) \($0)" } }

    static func name(_ random: inout SplitMix64) -> String {
        "\(first[random.below(first.count)]) \(last[random.below(last.count)])"
    }

    static func street(_ random: inout SplitMix64) -> String {
        "\(1 + random.below(9_999)) \(streetNames[random.below(streetNames.count)]) \(streetKinds[random.below(streetKinds.count)])"
    }
}

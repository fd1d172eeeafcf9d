import Foundation
import MoultModel
import MoultStore
import MoultXMLStore

extension CreateCommand {
    /// `create --output-type xml`: an empty XML store (its header: a new UUID, no object yet, the
    /// metadata Core Data writes for the model), written under a temporary name and renamed into place.
    func createXMLStore(_ model: ObjectModel) throws {
        guard outputType == .xml else {
            throw CommandFailure(.usage, "--output-type \(outputType): Moult does not write Core Data's binary store; use xml or sqlite")
        }
        let info = XMLStoreInfo(converting: StoreMetadata(model: model), nextObjectID: XMLStoreInfo.firstObjectNumber - 1)
        let writer = try XMLStoreWriter(url: URL(filePath: store), layout: try StoreLayout(model: model), info: info)
        try writer.finish()
    }
}

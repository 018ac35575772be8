extension Store {
    /// Like `commit`, without waiting for the disk (`synchronous=NORMAL` in WAL mode):
    /// for checkpoints of presence whose loss in a power cut only makes "last heard"
    /// older. It survives the process being killed (the write has reached the kernel);
    /// a power cut may undo it, unless a later `commit` or a WAL checkpoint has synced
    /// the log since. Never for events: those go through `commit`.
    public func commitRelaxed(_ body: (inout StoreTransaction) throws(StoreError) -> Void) throws(StoreError) {
        let appended = try relaxedTransaction { () throws(StoreError) in
            var transaction = StoreTransaction(store: self)
            try body(&transaction)
            return transaction.appended
        }
        committedStateChanges { $0.appended(appended) }
    }
}

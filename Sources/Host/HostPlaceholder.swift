enum HostPlaceholder {}

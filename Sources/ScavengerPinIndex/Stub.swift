// TEMPORARY stub until the index module lands.
@_exported import ScavengerCore

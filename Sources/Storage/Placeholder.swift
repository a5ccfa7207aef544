public enum StoragePlaceholder {}

public enum HTTPServerPlaceholder {}

import Gatehouse
import HTTPServer
public enum ConsolePlaceholder {}

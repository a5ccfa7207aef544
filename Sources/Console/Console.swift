import Gatehouse
import HTTPServer

/// The console: the JSON API and static files over the Gatehouse service layer.
public enum Console {}

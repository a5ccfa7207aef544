import Storage
import JOSE
public enum GatehousePlaceholder {}
